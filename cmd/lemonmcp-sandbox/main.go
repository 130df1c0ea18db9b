// Command lemonmcp-sandbox is the helper the stdio transport runs in a
// server's place: it confines itself (namespaces, Landlock, no_new_privs,
// seccomp, limits), starts the server, and ends every process the server
// leaves behind. It is built and installed next to liblemonmcp.so; see
// packages sandbox and sandbox/helper, and docs/sandbox.md.
package main

import "github.com/lemonmcp/lemonmcp/sandbox/helper"

func main() { helper.Main() }
