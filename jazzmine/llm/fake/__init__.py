"""A local stand-in for an OpenAI-compatible LLM server: the server, its wire and its policy."""
