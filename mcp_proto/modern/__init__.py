"""The 2026-07-28 revision's rules (issue 10): pure building blocks, each on its own.

Each submodule is complete by itself and imported by name (``mcp_proto.modern.headers``,
``.meta``, ``.discover``, ``.cache``, ...): this package deliberately imports none of
them, so blocks can be added side by side and the request pipeline picks what it needs.
"""
