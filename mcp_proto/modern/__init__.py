"""Building blocks of the 2026-07-28 (stateless, "modern") revision, pure and separate.

Each submodule is complete on its own and imported by name (``mcp_proto.modern.headers``,
``.meta``, ``.discover``, ...): this package deliberately imports none of them, so
blocks can be added side by side and the request pipeline picks what it needs.
"""
