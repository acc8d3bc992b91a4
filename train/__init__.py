"""Training the learned relevance models of issue 16 (not shipped in the wheel): `python -m train.pairs`."""
