package config_test

import (
	"fmt"

	"github.com/lemonmcp/lemonmcp/config"
)

// A host's configuration becomes the client's options and a transport that
// is built but not started (core.New takes both).
func ExampleParse() {
	parsed, err := config.Parse([]byte(`{
		"transport": {"type": "stdio", "command": "/usr/bin/env", "args": ["my-mcp-server"]},
		"client_info": {"name": "my-host", "version": "2.0"},
		"timeouts": {"call_ms": 15000}
	}`), "1.0.0")
	if err != nil {
		fmt.Println(err.Message)
		return
	}
	fmt.Println(parsed.Transport.Name(), parsed.Options.ClientInfo.Name, parsed.Options.Timeouts.Call)
	// Output: stdio my-host 15s
}

// A typo is an error that names the field's path, never a silent default.
func ExampleParse_typo() {
	_, err := config.Parse([]byte(`{"transport": {"type": "stdio", "comand": "my-mcp-server"}}`), "1.0.0")
	fmt.Println(err.Status, err.Message)
	// Output: invalid argument config.transport.comand: is not a known field
}

// Call options arrive with every call as a small JSON object; empty means
// the defaults.
func ExampleParseCallOptions() {
	opts, err := config.ParseCallOptions([]byte(`{"timeout_ms": 2500, "progress": true}`))
	fmt.Println(opts.Timeout, opts.Progress, err == nil)

	_, err = config.ParseCallOptions([]byte(`{"timeout": 5}`))
	fmt.Println(err.Message)
	// Output:
	// 2.5s true true
	// options.timeout is not a known call option
}
