// Package wire is what the library and the sandbox helper tell each other:
// the helper's command line (args.go), the records of its status pipe, a
// setup report, a failed step or how the server ended (status.go), and the
// Report itself (report.go). Both sides import it, so they cannot drift.
//
// Files:
//   - args.go: Args, the helper's command line, written and parsed in one
//     place, and the descriptors and exit status the two sides agree on.
//   - status.go: the status pipe's records.
//   - report.go: Report, what confines a server.
package wire
