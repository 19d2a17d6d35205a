"""DataSifterText: masking, masked-LM fill-in and keyphrase-swap obfuscation (METHODS.md §1)."""
