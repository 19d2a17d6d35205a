"""``kind: redact``: replace sensitive spans with type placeholders or consistent pseudonyms."""
