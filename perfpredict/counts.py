"""How large a count (nodes, ranks, GPUs) can be: the store keeps counts as INTEGER,
32-bit on PostgreSQL, so ingest refuses larger ones and an estimate is not asked for them.
A module of its own so that an estimate, which imports no ingest code, reads the same
bound."""

#: Largest count the store holds (PostgreSQL INTEGER).
MAX_COUNT = 2**31 - 1
