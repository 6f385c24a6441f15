"""Text models shared by the local judge and the summary audit (fact consistency: judge.text.consistency)."""
