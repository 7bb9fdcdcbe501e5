"""The LLM judge: prompt, OpenAI-compatible client with retries and a cache."""
