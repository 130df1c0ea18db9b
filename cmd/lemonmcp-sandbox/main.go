// Command lemonmcp-sandbox is the helper the stdio transport runs in a
// server's place: it confines itself (namespaces, Landlock, no_new_privs,
// limits), starts the server, and ends every process the server leaves
// behind. It is built and installed next to liblemonmcp.so; see package
// sandbox and docs/sandbox.md.
package main

import "github.com/lemonmcp/lemonmcp/sandbox"

func main() { sandbox.Main() }
