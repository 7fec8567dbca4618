"""What a call may see: whether memory is available in a chat at all (:mod:`.availability`,
OpenClaw's scope rules) and which documents a metadata filter lets through (:mod:`.filters`,
for the retriever, the vector store and the LangGraph store)."""
