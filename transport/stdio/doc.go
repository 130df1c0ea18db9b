// Package stdio is the transport that runs an MCP server as a child process
// and speaks newline-delimited JSON-RPC over its stdin and stdout.
//
// The server is started directly, never through a shell, in a process group
// of its own, so that everything it spawns (an npx wrapper's node process, a
// uv-managed Python) can be signalled as one unit and nothing outlives the
// transport. Its environment is minimal by default: a server receives only a
// short list of locale and path variables plus what the configuration adds,
// because the host's environment often carries credentials the server has no
// business seeing.
//
// Reading is bounded. Each stdout line is one message; a line longer than
// Config.MaxMessageBytes is skipped and reported without ever being held in
// memory whole, and lines that are not JSON (startup banners, stray prints,
// merged stderr) become log lines rather than protocol errors. A last line
// left unfinished when stdout ends (a server killed while writing a large
// answer) is the connection's loss, not a malformed message: unless it is
// complete JSON it is dropped with a warning, and the call it answered
// fails with the others as the connection closes. stderr is
// drained continuously whatever the host does with it, since a child blocked
// on a full stderr pipe would otherwise look like a hung server.
//
// Shutdown escalates: stdin is closed, the server gets Config.CloseGrace to
// exit, then the whole group gets SIGTERM, another grace period, then
// SIGKILL; the child is always reaped, through its pidfd on the runtime's
// poller, so a waiting child holds no OS thread (reaper.go). The same escalation runs in the
// background when the server goes away on its own (exit, or closing stdout
// while still alive), after the Sink has been told through Closed.
//
// A Config.Launcher (launch.go) may run the server through another program,
// the sandbox helper of package sandbox, which confines it and ends every
// process it leaves behind; the transport then holds a lifeline pipe to
// that program and cuts it before its SIGKILL, so the helper can
// still kill what left the process group. A launch may also add a
// sentence of the library's to the message of a server that went away on
// its own (Launch.Note: what the sandbox's proxy refused it).
//
// Close waits for Sink callbacks that are in flight, so a Sink must not call
// Close synchronously from inside Receive or Log; from inside Closed it may.
package stdio
