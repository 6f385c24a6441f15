"""The embedded offline judge (`local`): MiniLM retrieval plus value, negation, supersession and claim
cues. Weaker than an LLM judge; its calibration record says by how much."""
