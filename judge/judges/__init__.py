"""Judge backends, one each: llm (direct to OpenAI-compatible endpoints, else litellm + instructor),
local (offline), replay; the verdict cache and the model-blind rendering of a request. A judge answers
one request and knows no grading."""
