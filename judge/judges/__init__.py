"""Judge backends, one each: llm (litellm + instructor), local (offline), replay; the verdict cache and
the model-blind rendering of a request. A judge answers one request and knows no grading."""
