"""The knowledge-update benchmark's templates: ten families of wordings.

Each attribute: (values, the curated first statement, ways a daily log says it changed, the
current-value question, the history question, a later restatement in other words). Family
``a`` is the set the ranking was first built on; family ``b`` (other wordings, and the
attributes ``a`` lacks: manager, job title, phone, a project's version and a reversed
decision) was written to check that what helps on ``a`` is not about ``a``'s words (the cue
words of search/attributes.py were then written with both in view); family ``c`` was written
after them and, in the next round, read and tuned on; ``d``, ``e`` and ``f`` were written in
that round before they were run: ``d`` blind for one run, then read; ``e`` to choose between
variants of the ranking; ``f`` never read then. ``g`` was written next and run once
blind; ``c``, ``e`` and ``f``'s failures were then read to extend the cue words (gym,
bank, drink, doctor, builds); ``h`` was then written, with attributes no cue word names, and
run once, blind; its failures were then read (a hint word, "joined", no longer sets lines
apart) and ``i`` written and run once, blind. ``j`` (an airline, a supermarket, a newspaper,
a project's paging tool and docs site) was written after earlier values and a subject's
uncited lines were built and before ``i``'s attributes got cue words, and run once, blind;
in the round after, its Chinese airline changes were read (taken for restatements) and two of
``h``'s restatements that added a fact were rewritten as restatements.
"""

from __future__ import annotations

from typing import Any

Table = dict[str, tuple[Any, ...]]

EN_A: Table = {
    "home": (["Paris", "Berlin", "Lisbon", "Oslo", "Madrid", "Vienna", "Dublin", "Prague"],
             "{s} lives in {v}.", ["{s} moved to {v}.", "{s} now lives in {v}.",
                                   "{s} relocated to {v} this month."],
             "Where does {s} live now?", "Where did {s} live before {v}?",
             "{s}'s home is in {v}."),
    "employer": (["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne"],
                 "{s} works at {v}.", ["{s} started a new job at {v}.",
                                       "{s} joined {v}.", "{s} now works at {v}."],
                 "Where does {s} work now?", "Where did {s} work before {v}?",
                 "{s} is employed by {v}."),
    "car": (["a Toyota", "a Tesla", "a Volvo", "a Renault", "a Honda", "a Skoda"],
            "{s} drives {v}.", ["{s} bought {v}.", "{s} switched to {v}.",
                                "{s} now drives {v}."],
            "What car does {s} drive now?", "What car did {s} drive before {v}?",
            "{s}'s car is {v}."),
    "diet": (["vegetarian", "vegan", "pescatarian", "gluten-free", "keto"],
             "{s} is {v}.", ["{s} became {v}.", "{s} went {v} recently.",
                             "{s} is now {v}."],
             "What diet does {s} follow now?", "What diet did {s} follow before {v}?",
             "{s} eats {v}."),
}
EN_PROJECT_A: Table = {
    "deadline": (["12 March", "30 April", "15 May", "1 June", "20 July", "9 September"],
                 "The {s} release is due on {v}.", ["The {s} deadline moved to {v}.",
                                                   "{s} now ships on {v}."],
                 "When is the {s} release due now?", "When was {s} due before {v}?",
                 "{s} is scheduled for {v}."),
    "database": (["PostgreSQL", "MySQL", "SQLite", "MongoDB", "Cassandra"],
                 "{s} stores its data in {v}.", ["The team moved {s} to {v}.",
                                                "{s} switched its database to {v}."],
                 "Which database does {s} use now?", "Which database did {s} use before {v}?",
                 "{s} runs on {v}."),
}
ZH_A: Table = {
    "home": (["北京", "上海", "广州", "深圳", "杭州", "成都", "南京", "西安"],
             "{s}住在{v}。", ["{s}搬到了{v}。", "{s}现在住在{v}。", "{s}这个月搬去了{v}。"],
             "{s}现在住在哪里？", "{s}搬到{v}之前住在哪里？", "{s}的家在{v}。"),
    "employer": (["华为", "腾讯", "阿里巴巴", "百度", "京东", "小米"],
                 "{s}在{v}工作。", ["{s}跳槽去了{v}。", "{s}加入了{v}。", "{s}现在在{v}上班。"],
                 "{s}现在在哪里工作？", "{s}去{v}之前在哪里工作？", "{s}的公司是{v}。"),
    "diet": (["素食", "纯素", "无麸质饮食", "低碳水饮食"],
             "{s}吃{v}。", ["{s}改吃{v}了。", "{s}最近开始{v}。", "{s}现在吃{v}。"],
             "{s}现在吃什么饮食？", "{s}改吃{v}之前吃什么？", "{s}坚持{v}。"),
}
ZH_PROJECT_A: Table = {
    "deadline": (["三月十二日", "四月三十日", "五月十五日", "六月一日", "七月二十日"],
                 "{s}项目的截止日期是{v}。", ["{s}项目的截止日期改到了{v}。", "{s}项目推迟到{v}交付。"],
                 "{s}项目现在什么时候截止？", "{s}项目改到{v}之前的截止日期是什么？",
                 "{s}项目定在{v}完成。"),
}

EN_B: Table = {
    "home": (["Porto", "Zurich", "Warsaw", "Athens", "Munich", "Seville", "Krakow", "Geneva"],
             "{s} is based in {v}.", ["{s} has settled in {v}.", "{s} packed up and went to live in {v}.",
                                      "{s}'s new address is in {v}."],
             "Which city is {s} living in now?", "Which city was {s} living in before {v}?",
             "{s} still calls {v} home."),
    "manager": (["Priya", "Marcus", "Helen", "Tomasz", "Aiko", "Rafael"],
                "{s} reports to {v}.", ["{s} got a new manager, {v}.", "{s}'s team lead is now {v}.",
                                        "{s} was moved under {v}."],
                "Who is {s}'s manager now?", "Who was {s}'s manager before {v}?",
                "{v} manages {s}."),
    "phone": (["an iPhone", "a Pixel", "a Galaxy", "a Fairphone", "a OnePlus"],
              "{s} uses {v}.", ["{s} upgraded to {v}.", "{s} replaced the old phone with {v}."],
              "What phone does {s} have now?", "What phone did {s} have before {v}?",
              "{s} carries {v}."),
    "role": (["backend engineer", "product manager", "data scientist", "designer", "team lead"],
             "{s} is a {v}.", ["{s} was promoted to {v}.", "{s} changed roles and is a {v} these days."],
             "What is {s}'s job title now?", "What was {s}'s job title before {v}?",
             "{s} holds the {v} position."),
}
EN_PROJECT_B: Table = {
    "version": (["2.1", "2.4", "3.0", "3.2", "4.0"],
                "{s} is on version {v}.", ["{s} was upgraded to version {v}.", "We shipped {s} {v}."],
                "Which version of {s} is live now?", "Which version of {s} was live before {v}?",
                "{s} {v} is what runs in production."),
    "decision": (["REST", "GraphQL", "gRPC"],
                 "For {s} we decided to use {v} for the API.",
                 ["We reversed the {s} API decision: {v} instead.",
                  "{s}'s API will use {v} after all."],
                 "Which API style does {s} use now?", "Which API style did {s} use before {v}?",
                 "The {s} API is built on {v}."),
}
ZH_B: Table = {
    "home": (["苏州", "天津", "重庆", "武汉", "厦门", "青岛"],
             "{s}家住{v}。", ["{s}已经在{v}安家了。", "{s}举家迁往{v}。"],
             "{s}如今住在哪个城市？", "{s}去{v}以前住在哪个城市？", "{s}仍然住在{v}。"),
    "manager": (["老王", "小李", "陈经理", "赵总"],
                "{s}的上级是{v}。", ["{s}换了领导，现在归{v}管。", "{s}的新主管是{v}。"],
                "{s}目前的上级是谁？", "{s}在{v}之前的上级是谁？", "{v}负责管理{s}。"),
}
ZH_PROJECT_B: Table = {
    "version": (["一点二版", "二点零版", "三点一版", "四点零版"],
                "{s}系统用的是{v}。", ["{s}系统升级到了{v}。", "{s}系统更新成{v}了。"],
                "{s}系统目前是哪个版本？", "{s}系统升级到{v}之前是哪个版本？", "{s}系统运行在{v}上。"),
}


# Family c: written after the ranking's cue words, as a last check (never tuned on).
EN_C: Table = {
    "home": (["Toronto", "Lyon", "Bergen", "Valencia", "Graz", "Cork"],
             "{s} has an apartment in {v}.", ["{s} just finished moving into a place in {v}.",
                                              "{s} told me the family is in {v} now."],
             "What city does {s} call home now?", "What city did {s} call home before {v}?",
             "{s}'s place is in {v}."),
    "employer": (["Northwind", "Contoso", "Fabrikam", "Tailspin", "Litware"],
                 "{s} is on the payroll at {v}.", ["{s} accepted an offer from {v}.",
                                                  "{s} is with {v} since Monday."],
                 "Which company is {s} at now?", "Which company was {s} at before {v}?",
                 "{s} earns a living at {v}."),
    "partner": (["Sam", "Alex", "Jordan", "Robin", "Morgan"],
                "{s} is dating {v}.", ["{s} and {v} got engaged.", "{s} is seeing {v} these days."],
                "Who is {s}'s partner now?", "Who was {s}'s partner before {v}?",
                "{s} and {v} are together."),
    "pet": (["a beagle", "a tabby cat", "a parrot", "a rabbit"],
            "{s} has {v}.", ["{s} adopted {v}.", "{s} brought home {v} from the shelter."],
            "What pet does {s} have now?", "What pet did {s} have before {v}?",
            "{s} walks {v} every morning."),
}
EN_PROJECT_C: Table = {
    "owner": (["the payments team", "the platform team", "the mobile team", "the data team"],
              "{s} is owned by {v}.", ["{s} was handed over to {v}.",
                                       "Ownership of {s} passed to {v}."],
              "Which team owns {s} now?", "Which team owned {s} before {v}?",
              "{v} looks after {s}."),
    "cloud": (["AWS", "Azure", "GCP", "Hetzner"],
              "{s} is hosted on {v}.", ["{s} was migrated to {v}.", "We moved {s} over to {v}."],
              "Where is {s} hosted now?", "Where was {s} hosted before {v}?",
              "{s} runs in {v}."),
}
ZH_C: Table = {
    "employer": (["美团", "字节跳动", "网易", "携程"],
                 "{s}在{v}上班。", ["{s}拿到了{v}的offer，已经入职。", "{s}换工作去了{v}。"],
                 "{s}现在在哪家公司？", "{s}去{v}之前在哪家公司？", "{s}目前就职于{v}。"),
    "pet": (["一只柯基", "一只橘猫", "一只鹦鹉"],
            "{s}养了{v}。", ["{s}最近领养了{v}。", "{s}家里新来了{v}。"],
            "{s}现在养的是什么宠物？", "{s}养{v}之前养的是什么？", "{s}每天遛{v}。"),
}
ZH_PROJECT_C: Table = {
    "owner": (["支付组", "平台组", "数据组"],
              "{s}由{v}负责。", ["{s}交给了{v}。", "{s}现在归{v}维护。"],
              "{s}现在由哪个组负责？", "{s}交给{v}之前由哪个组负责？", "{v}在维护{s}。"),
}


# Family d: written before family c's failures were first read (c then became a
# set the ranking was tuned on); d's failures were read after its first run.
EN_D: Table = {
    "home": (["Nairobi", "Tallinn", "Quebec", "Perth", "Antwerp", "Bologna"],
             "{s} rents a flat in {v}.", ["{s} said goodbye to the old flat and is living in {v}.",
                                          "{s} signed a lease in {v}."],
             "In which town does {s} reside now?", "In which town did {s} reside before {v}?",
             "{s} resides in {v}."),
    "car": (["a Mazda", "a Kia", "a Fiat", "a Subaru", "a Peugeot"],
            "{s} gets around in {v}.", ["{s} traded in the old car for {v}.",
                                        "{s} picked up {v} from the dealer."],
            "Which vehicle does {s} own now?", "Which vehicle did {s} own before {v}?",
            "{s}'s ride is {v}."),
    "sport": (["tennis", "rowing", "climbing", "judo", "cycling"],
              "{s}'s sport is {v}.", ["{s} took up {v}.", "{s} gave up the old sport for {v}."],
              "What sport does {s} do now?", "What sport did {s} do before {v}?",
              "{s} trains for {v}."),
    "study": (["law", "medicine", "architecture", "economics"],
              "{s} studies {v}.", ["{s} enrolled in {v}.", "{s} transferred to the {v} program."],
              "What is {s} studying now?", "What was {s} studying before {v}?",
              "{s} is a {v} student."),
}
EN_PROJECT_D: Table = {
    "language": (["Rust", "Scala", "Kotlin", "TypeScript", "Elixir"],
                 "{s} is written in {v}.", ["{s} got rewritten in {v}.",
                                           "The {s} codebase was ported to {v}."],
                 "What language is {s} written in now?", "What language was {s} written in before {v}?",
                 "{s}'s code is {v}."),
    "launch": (["3 February", "14 April", "22 June", "8 October"],
               "{s} goes live on {v}.", ["{s} slipped to {v}.", "Launch of {s} pushed back to {v}."],
               "When does {s} launch now?", "When was {s} supposed to launch before {v}?",
               "{s} launches {v}."),
}
ZH_D: Table = {
    "car": (["一辆比亚迪", "一辆大众", "一辆奥迪", "一辆特斯拉"],
            "{s}开的是{v}。", ["{s}把旧车卖了，换了{v}。", "{s}刚提了{v}。"],
            "{s}现在开什么车？", "{s}开{v}之前开什么车？", "{s}的座驾是{v}。"),
    "sport": (["羽毛球", "游泳", "瑜伽", "跑步"],
              "{s}的爱好是{v}。", ["{s}迷上了{v}。", "{s}开始练{v}了。"],
              "{s}现在喜欢什么运动？", "{s}喜欢{v}之前喜欢什么运动？", "{s}经常练{v}。"),
}
ZH_PROJECT_D: Table = {
    "language": (["Java", "Kotlin", "Python", "Rust"],
                 "{s}是用{v}写的。", ["{s}用{v}重写了。", "{s}的代码迁移到了{v}。"],
                 "{s}现在用什么语言写？", "{s}改用{v}之前用什么语言？", "{s}的开发语言是{v}。"),
}


# Families e and f: written after the ranking's grouping and its wider cue list,
# before either was run; e chose between three variants of the ranking, f was run once, last.
EN_E: Table = {
    "doctor": (["Dr. Okafor", "Dr. Lindqvist", "Dr. Mehta", "Dr. Alvarez", "Dr. Brennan"],
               "{s}'s family doctor is {v}.", ["{s} registered with {v} at the new clinic.",
                                                "{s} sees {v} for checkups from now on."],
               "Who is {s}'s doctor now?", "Who was {s}'s doctor before {v}?",
               "{v} treats {s}."),
    "bank": (["Monzo", "Revolut", "HSBC", "Barclays", "ING"],
             "{s} banks with {v}.", ["{s} opened an account at {v} and closed the old one.",
                                     "{s}'s salary goes into {v} now."],
             "Which bank does {s} use now?", "Which bank did {s} use before {v}?",
             "{s} keeps savings at {v}."),
    "coffee": (["flat white", "espresso", "oat latte", "cold brew", "cappuccino"],
               "{s} always orders a {v}.", ["{s} has switched to {v} lately.",
                                            "{s} asked for a {v} at every meeting this month."],
               "What coffee does {s} drink now?", "What coffee did {s} drink before {v}?",
               "{s}'s usual is a {v}."),
    "commute": (["by bike", "by train", "by bus", "on foot", "by car"],
                "{s} commutes {v}.", ["{s} gets to the office {v} since the spring.",
                                      "{s} started coming in {v}."],
                "How does {s} get to work now?", "How did {s} get to work before going {v}?",
                "{s} travels {v} every day."),
}
EN_PROJECT_E: Table = {
    "ci": (["Jenkins", "GitHub Actions", "GitLab CI", "CircleCI", "Buildkite"],
           "{s} builds on {v}.", ["Pipelines for {s} now run in {v}.",
                                  "{s}'s builds were switched over to {v}."],
           "Which CI does {s} use now?", "Which CI did {s} use before {v}?",
           "{s} is tested by {v}."),
    "budget": (["40k", "55k", "70k", "90k", "120k"],
               "{s} has a budget of {v}.", ["Finance approved {v} for {s}.",
                                            "{s}'s budget was cut to {v}."],
               "What is the budget for {s} now?", "What was the budget for {s} before {v}?",
               "{s} can spend {v}."),
}
ZH_E: Table = {
    "doctor": (["李医生", "王医生", "张医生", "陈医生"],
               "{s}的家庭医生是{v}。", ["{s}换到了{v}那里看病。", "{s}以后找{v}做体检。"],
               "{s}现在的医生是谁？", "{s}找{v}之前的医生是谁？", "{v}给{s}看病。"),
    "commute": (["骑车", "坐地铁", "坐公交", "走路"],
                "{s}每天{v}上班。", ["{s}最近改成{v}去公司了。", "{s}开始{v}通勤。"],
                "{s}现在怎么去上班？", "{s}{v}之前怎么去上班？", "{s}一直{v}去公司。"),
}
ZH_PROJECT_E: Table = {
    "ci": (["Jenkins", "GitLab", "TeamCity", "Drone"],
           "{s}的持续集成用的是{v}。", ["{s}的流水线迁到了{v}。", "{s}改用{v}跑构建。"],
           "{s}现在用什么做持续集成？", "{s}用{v}之前用什么做持续集成？", "{s}在{v}上构建。"),
}

EN_F: Table = {
    "gym": (["FitHub", "IronWorks", "PulseGym", "CoreClub", "PeakFit"],
            "{s} is a member at {v}.", ["{s} cancelled the old membership and signed up at {v}.",
                                        "{s} trains at {v} these days."],
            "Which gym does {s} go to now?", "Which gym did {s} go to before {v}?",
            "{s} works out at {v}."),
    "language": (["Spanish", "Japanese", "German", "Korean", "Italian"],
                 "{s} is learning {v}.", ["{s} dropped the old course and started {v} lessons.",
                                          "{s} practises {v} with a tutor every week."],
                 "Which language is {s} learning now?", "Which language was {s} learning before {v}?",
                 "{s} studies {v} on the app."),
    "team": (["the search team", "the billing team", "the infra team", "the growth team"],
             "{s} is on {v}.", ["{s} transferred to {v}.", "{s} sits with {v} after the reorg."],
             "Which team is {s} on now?", "Which team was {s} on before {v}?",
             "{s} belongs to {v}."),
    "weekend": (["hiking", "sailing", "pottery", "birdwatching"],
                "{s} spends weekends {v}.", ["{s} got hooked on {v}.",
                                             "{s} has been out {v} every Saturday."],
                "What does {s} do on weekends now?", "What did {s} do on weekends before {v}?",
                "{s}'s weekends are for {v}."),
}
EN_PROJECT_F: Table = {
    "meeting": (["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
                "The {s} sync is on {v}.", ["The {s} standup moved to {v}.",
                                            "We meet about {s} on {v} from now on."],
                "Which day is the {s} meeting now?", "Which day was the {s} meeting before {v}?",
                "{s} reviews happen every {v}."),
    "vendor": (["Twilio", "SendGrid", "Mailgun", "Postmark"],
               "{s} sends email through {v}.", ["{s} dropped its provider for {v}.",
                                                "Emails from {s} go out via {v} since the outage."],
               "Which email provider does {s} use now?",
               "Which email provider did {s} use before {v}?", "{s} relies on {v} for mail."),
}
ZH_F: Table = {
    "gym": (["乐动健身", "威尔士", "超级猩猩", "一兆韦德"],
            "{s}在{v}办了卡。", ["{s}退了原来的卡，去了{v}。", "{s}最近都在{v}锻炼。"],
            "{s}现在去哪家健身房？", "{s}去{v}之前去哪家健身房？", "{s}常去{v}。"),
    "language": (["日语", "韩语", "法语", "德语"],
                 "{s}在学{v}。", ["{s}报了{v}班。", "{s}改学{v}了。"],
                 "{s}现在在学什么语言？", "{s}学{v}之前在学什么语言？", "{s}每天练{v}。"),
}
ZH_PROJECT_F: Table = {
    "meeting": (["周一", "周二", "周三", "周四"],
                "{s}的例会在{v}。", ["{s}的例会改到了{v}。", "{s}以后{v}开会。"],
                "{s}的例会现在是哪天？", "{s}的例会改到{v}之前是哪天？", "{s}每{v}开例会。"),
}

EN_G: Table = {
    "bank": (["Monzo", "Barclays", "ING", "Revolut", "HSBC"],
             "{s} banks with {v}.", ["{s} closed the old account and opened one at {v}.",
                                     "{s}'s salary now lands in a {v} account."],
             "Which bank does {s} use now?", "Which bank did {s} use before {v}?",
             "{s} keeps savings at {v}."),
    "streaming": (["Netflix", "Hulu", "Disney+", "HBO Max", "Apple TV"],
                  "{s} subscribes to {v}.", ["{s} cancelled the old plan and signed up for {v}.",
                                             "{s} only watches {v} now."],
                  "Which streaming service does {s} pay for now?",
                  "Which streaming service did {s} pay for before {v}?",
                  "{s} watches shows on {v}."),
    "partner": (["Sam", "Alex", "Jordan", "Robin", "Casey"],
                "{s} is dating {v}.", ["{s} and {v} got together after the wedding.",
                                       "{s} has a new partner, {v}."],
                "Who is {s} seeing now?", "Who was {s} seeing before {v}?",
                "{s} spends evenings with {v}."),
    "school": (["Hillside Primary", "Oakwood School", "St. Mary's", "Riverside Academy"],
               "{s}'s son goes to {v}.", ["{s} enrolled the boy at {v}.",
                                          "{s}'s son changed schools to {v}."],
               "Which school does {s}'s son attend now?",
               "Which school did {s}'s son attend before {v}?",
               "{s} drops the kid off at {v} every morning."),
}
EN_PROJECT_G: Table = {
    "database": (["Postgres", "MySQL", "MongoDB", "DynamoDB", "Cassandra"],
                 "{s} stores its data in {v}.", ["{s} migrated its tables to {v}.",
                                                 "The {s} data moved onto {v} last sprint."],
                 "Which database does {s} use now?", "Which database did {s} use before {v}?",
                 "{s} is backed by {v}."),
    "owner": (["Priya", "Tomasz", "Chen", "Fatima", "Lucas"],
              "{s} is owned by {v}.", ["{v} took over {s}.", "{s} was handed to {v}."],
              "Who owns {s} now?", "Who owned {s} before {v}?",
              "{v} is responsible for {s}."),
}
ZH_G: Table = {
    "bank": (["招商银行", "工商银行", "建设银行", "中国银行"],
             "{s}的工资卡在{v}。", ["{s}把账户转到了{v}。", "{s}新开了{v}的卡。"],
             "{s}现在用哪家银行？", "{s}用{v}之前用哪家银行？", "{s}在{v}存钱。"),
    "school": (["实验小学", "育才小学", "外国语小学", "第一小学"],
               "{s}的儿子在{v}上学。", ["{s}给儿子转学到了{v}。", "{s}的孩子进了{v}。"],
               "{s}的儿子现在在哪所学校？", "{s}的儿子去{v}之前在哪所学校？",
               "{s}每天送孩子去{v}。"),
}
ZH_PROJECT_G: Table = {
    "database": (["MySQL", "PostgreSQL", "MongoDB", "Redis"],
                 "{s}的数据存在{v}里。", ["{s}的数据迁到了{v}。", "{s}改用{v}存数据。"],
                 "{s}现在用什么数据库？", "{s}用{v}之前用什么数据库？", "{s}的后端是{v}。"),
}


# Family h: written after the cue words had been extended on c, e and f's failures, and run
# once, blind, to measure them on attributes and wordings none of them names. Two rounds later
# we rewrote two of its restatements that added a fact ("has training with {v} on Thursdays" for
# "turns out for {v} on Sundays", "{s}每两周和{v}见一次面"): a note that adds a fact is new, not
# a restatement, and the duplicate check rightly kept them.
EN_H: Table = {
    "insurer": (["Allianz", "AXA", "Aviva", "Generali", "MetLife"],
                "{s} is insured with {v}.", ["{s} switched the health cover to {v}.",
                                             "{s}'s policy is with {v} since the renewal."],
                "Who insures {s} now?", "Who insured {s} before {v}?",
                "{s} pays premiums to {v}."),
    "club": (["Riverside FC", "Northside Rovers", "Eastfield United", "Harbour Athletic"],
             "{s} plays for {v}.", ["{s} joined {v} for the new season.",
                                    "{s} turns out for {v} on Sundays these days."],
             "Which club does {s} play for now?", "Which club did {s} play for before {v}?",
             "{s} is on the {v} squad."),
    "mentor": (["Hiro", "Ines", "Kofi", "Lena", "Mateo"],
               "{s} is mentored by {v}.", ["{v} became {s}'s mentor.",
                                           "{s} has mentoring sessions with {v} now."],
               "Who mentors {s} now?", "Who mentored {s} before {v}?",
               "{s} meets {v} for mentoring every other week."),
}
EN_PROJECT_H: Table = {
    "monitoring": (["Datadog", "Grafana", "New Relic", "Prometheus", "Sentry"],
                   "{s} is monitored with {v}.", ["{s}'s alerts go through {v} now.",
                                                  "We wired {s} up to {v} for dashboards."],
                   "What monitors {s} now?", "What monitored {s} before {v}?",
                   "{s}'s dashboards live in {v}."),
    "room": (["Room Alder", "Room Birch", "Room Cedar", "Room Maple"],
             "{s}'s planning is held in {v}.", ["{s} planning moved to {v}.",
                                                "We book {v} for {s} planning from now on."],
             "Where is {s}'s planning held now?", "Where was {s}'s planning held before {v}?",
             "{s} plans its sprints in {v}."),
}
ZH_H: Table = {
    "insurer": (["平安保险", "太平洋保险", "人寿保险", "泰康保险"],
                "{s}的保险是在{v}买的。", ["{s}把保险换成了{v}。", "{s}今年续保选了{v}。"],
                "{s}现在在哪家保险公司投保？", "{s}换到{v}之前在哪家投保？",
                "{s}每年给{v}交保费。"),
    "mentor": (["老王", "老李", "周老师", "林老师"],
               "{s}的导师是{v}。", ["{s}现在跟着{v}学。", "{v}成了{s}的新导师。"],
               "{s}现在的导师是谁？", "{s}跟{v}之前的导师是谁？", "{v}负责带{s}。"),
}
ZH_PROJECT_H: Table = {
    "monitoring": (["Prometheus", "Grafana", "Datadog", "Sentry"],
                   "{s}用{v}做监控。", ["{s}的告警改走{v}了。", "{s}接入了{v}。"],
                   "{s}现在用什么监控？", "{s}用{v}之前用什么监控？", "{s}的仪表盘在{v}上。"),
    "room": (["一号会议室", "二号会议室", "三号会议室", "大会议室"],
             "{s}的周会在{v}开。", ["{s}的周会挪到了{v}。", "{s}以后在{v}开周会。"],
             "{s}的周会现在在哪开？", "{s}的周会挪到{v}之前在哪开？", "{s}在{v}开周会。"),
}


# Family i: written after h's failures were read (a hint word, "joined", no longer sets lines
# apart), and run once, blind.
EN_I: Table = {
    "carrier": (["Vodafone", "O2", "Three", "EE", "T-Mobile"],
                "{s}'s phone plan is with {v}.", ["{s} ported the number to {v}.",
                                                  "{s} moved the mobile contract over to {v}."],
                "Which carrier is {s} on now?", "Which carrier was {s} on before {v}?",
                "{s} gets the phone bill from {v}."),
    "barber": (["Nico", "Otto", "Pia", "Quentin"],
               "{s} gets haircuts from {v}.", ["{s} started going to {v} for haircuts.",
                                               "{v} cuts {s}'s hair these days."],
               "Who cuts {s}'s hair now?", "Who cut {s}'s hair before {v}?",
               "{s} books {v} for a trim every month."),
    "volunteering": (["the food bank", "the animal shelter", "the library", "the hospice"],
                     "{s} volunteers at {v}.", ["{s} now spends Saturdays helping at {v}.",
                                                "{s} signed up to volunteer with {v}."],
                     "Where does {s} volunteer now?", "Where did {s} volunteer before {v}?",
                     "{s} gives time to {v} every week."),
}
EN_PROJECT_I: Table = {
    "tracker": (["Jira", "Linear", "Trello", "Asana"],
                "{s} tracks its tickets in {v}.", ["{s}'s backlog moved to {v}.",
                                                   "We migrated the {s} issues into {v}."],
                "Where does {s} track tickets now?", "Where did {s} track tickets before {v}?",
                "{s}'s board lives in {v}."),
    "design": (["Figma", "Sketch", "Penpot", "Framer"],
               "{s}'s designs are made in {v}.", ["The {s} designers switched to {v}.",
                                                  "{s} mockups are drawn in {v} now."],
               "Which design tool does {s} use now?", "Which design tool did {s} use before {v}?",
               "{s}'s screens are designed in {v}."),
}
ZH_I: Table = {
    "carrier": (["中国移动", "中国联通", "中国电信"],
                "{s}的手机号是{v}的。", ["{s}把号码转到了{v}。", "{s}换成了{v}的套餐。"],
                "{s}现在用哪家运营商？", "{s}转到{v}之前用哪家运营商？", "{s}每月给{v}交话费。"),
    "barber": (["阿杰", "小美", "老周", "阿强"],
               "{s}一直找{v}理发。", ["{s}改去找{v}剪头发了。", "{v}现在给{s}剪头发。"],
               "{s}现在找谁理发？", "{s}找{v}之前找谁理发？", "{s}每个月请{v}修一次头发。"),
}
ZH_PROJECT_I: Table = {
    "tracker": (["Jira", "禅道", "Teambition", "飞书项目"],
                "{s}的任务在{v}里跟踪。", ["{s}的需求迁到了{v}。", "{s}改用{v}管理任务。"],
                "{s}现在用什么跟踪任务？", "{s}用{v}之前用什么跟踪任务？", "{s}的看板在{v}上。"),
}

EN_J: Table = {
    "airline": (["Lufthansa", "KLM", "Ryanair", "easyJet", "Iberia"],
                "{s} always flies with {v}.", ["{s} switched the air miles to {v}.",
                                               "{s} has been booking {v} flights lately."],
                "Which airline does {s} fly with now?", "Which airline did {s} fly with before {v}?",
                "{s} is a frequent flyer with {v}."),
    "supermarket": (["Tesco", "Aldi", "Lidl", "Sainsbury's"],
                    "{s} does the weekly shop at {v}.", ["{s} started shopping at {v}.",
                                                         "{s} switched the groceries to {v}."],
                    "Where does {s} buy groceries now?",
                    "Where did {s} buy groceries before {v}?", "{s} fills the trolley at {v}."),
    "newspaper": (["The Guardian", "The Times", "Le Monde", "El Pais"],
                  "{s} reads {v} every morning.", ["{s} subscribed to {v}.",
                                                   "{s} gets the news from {v} these days."],
                  "Which newspaper does {s} read now?",
                  "Which newspaper did {s} read before {v}?", "{s} takes {v} with breakfast."),
}
EN_PROJECT_J: Table = {
    "paging": (["PagerDuty", "Opsgenie", "incident.io", "VictorOps"],
               "{s} pages its on-call through {v}.", ["{s}'s alerts now page via {v}.",
                                                      "The {s} rota was set up in {v}."],
               "Which paging tool does {s} use now?", "Which paging tool did {s} use before {v}?",
               "{s}'s on-call gets paged by {v}."),
    "docs": (["Confluence", "Notion", "GitBook", "Docusaurus"],
             "{s}'s docs live in {v}.", ["The {s} wiki was moved to {v}.",
                                         "{s} documentation is written in {v} now."],
             "Where are {s}'s docs now?", "Where were {s}'s docs before {v}?",
             "{s} keeps its documentation in {v}."),
}
ZH_J: Table = {
    "airline": (["国航", "东航", "南航", "海航"],
                "{s}一直坐{v}的航班。", ["{s}的里程换到了{v}。", "{s}最近都订{v}的机票。"],
                "{s}现在坐哪家航空公司？", "{s}换到{v}之前坐哪家航空公司？", "{s}是{v}的常旅客。"),
    "supermarket": (["盒马", "永辉", "沃尔玛", "山姆"],
                    "{s}在{v}买菜。", ["{s}改去{v}买菜了。", "{s}最近都在{v}采购。"],
                    "{s}现在在哪里买菜？", "{s}去{v}之前在哪里买菜？", "{s}每周去{v}购物。"),
}
ZH_PROJECT_J: Table = {
    "docs": (["Confluence", "语雀", "飞书文档"],
             "{s}的文档放在{v}。", ["{s}的文档迁到了{v}。", "{s}现在用{v}写文档。"],
             "{s}的文档现在放在哪里？", "{s}的文档迁到{v}之前放在哪里？", "{s}的文档都在{v}上。"),
}


#: family -> (English people, English projects, Chinese people, Chinese projects)
FAMILIES: dict[str, tuple[Table, Table, Table, Table]] = {
    "a": (EN_A, EN_PROJECT_A, ZH_A, ZH_PROJECT_A),
    "b": (EN_B, EN_PROJECT_B, ZH_B, ZH_PROJECT_B),
    "c": (EN_C, EN_PROJECT_C, ZH_C, ZH_PROJECT_C),
    "d": (EN_D, EN_PROJECT_D, ZH_D, ZH_PROJECT_D),
    "e": (EN_E, EN_PROJECT_E, ZH_E, ZH_PROJECT_E),
    "f": (EN_F, EN_PROJECT_F, ZH_F, ZH_PROJECT_F),
    "g": (EN_G, EN_PROJECT_G, ZH_G, ZH_PROJECT_G),
    "h": (EN_H, EN_PROJECT_H, ZH_H, ZH_PROJECT_H),
    "i": (EN_I, EN_PROJECT_I, ZH_I, ZH_PROJECT_I),
    "j": (EN_J, EN_PROJECT_J, ZH_J, ZH_PROJECT_J),
}
