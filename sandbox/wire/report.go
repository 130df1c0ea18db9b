package wire

// Report says what confines a server: for one start, what the helper set
// up (its setup record); for the machine, what a start could get (the
// probe, lmcp_features).
type Report struct {
	Namespaces bool `json:"namespaces"`
	// Landlock is the ABI applied (0: none); LandlockRights the rights it
	// handles, file system and network, by their kernel names without the
	// LANDLOCK_ACCESS_ prefix ("FS_WRITE_FILE", "NET_CONNECT_TCP");
	// Scoped what it scopes ("SIGNAL", "ABSTRACT_UNIX_SOCKET").
	Landlock       int      `json:"landlock"`
	LandlockRights []string `json:"landlockRights,omitempty"`
	Scoped         []string `json:"scoped,omitempty"`
	// Network is "none", "proxy", "tcp-denied" (Landlock only: UDP stays
	// open) or "host".
	Network    string `json:"network"`
	Proc       string `json:"proc"` // "private" or "host"
	NoNewPrivs bool   `json:"noNewPrivs"`
	// Limits: every limit asked for is set.
	Limits bool `json:"limits"`
	// Reaper is how the server's descendants are ended: "pid-namespace"
	// or "subreaper" ("none" without the helper).
	Reaper string `json:"reaper"`
	// UnixSockets is "denied" when the seccomp filter refuses the server
	// new AF_UNIX sockets, "allowed" otherwise.
	UnixSockets string `json:"unixSockets"`
	// Missing lists what the policy asked for and did not get (only with
	// "required": false; otherwise the start fails instead).
	Missing []string `json:"missing,omitempty"`
}
