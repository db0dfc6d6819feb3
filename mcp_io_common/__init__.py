"""mcp_io_common: the non-protocol mechanics both shells share (issue 9, item 5).

Neither shell imports the other (``tests/test_shell_independence.py``). What both need
is either pure, and then lives in ``mcp_proto``, or touches the operating system or the
HTTP library, and then lives here, once:

* ``processes``: pipe sizes and the server's process group (signals, waiting), and
  stopping a server process (``stop_steps``, a flow each shell waits out);
* ``stdio``: a stdio server object's facts, its process's start and its stderr log;
* ``commands``: looking a command's first word up the way the child will see it;
* ``files``: reading an ``mcpServers`` definition file;
* ``httpcore_glue``: header encoding, request targets, httpcore's exceptions;
* ``custom_pool``: httpcore's pool where the host asked for a proxy, a network backend
  or its own pool factory (CUST-1);
* ``servers``: which class serves a transport, which failure of several to raise;
* ``connecting``: ``connect``'s arguments and their docs, planned by the core;
* ``pool``: the rules of both shells' HTTP/1.1 connection pools (which connection, for
  how long), without their I/O;
* ``http11``, ``socket_stream``: the plain-HTTP connection's HTTP/1.1 state and the
  lean socket stream's reads, without their waits;
* ``lines``: a child's stderr cut into bounded lines;
* ``notices``: whether a WARNING on the host's logger would be written (DEP-12..14);
* ``events``: the client's rule for callbacks queued before a call's answer.

It imports neither shell nor any event-loop library, so importing ``mcp_io_sync`` never
loads Trio and importing ``mcp_io_trio`` never loads the blocking shell.
"""

__all__: list[str] = []  # the helpers are imported from their modules
