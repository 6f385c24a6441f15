"""Text tools shared by the local judge and the summary audit: lexical cues and the MiniLM loader.
No ledger and no judge here."""
