//go:build lemonmcp_rootmodule

// Package tests holds LemonMCP's cross-host tests and fixtures.
//
// This file is never built (its build tag is never set). It exists so that
// `go mod tidy` keeps the requirement on the root module, which the replace
// directive in go.mod points at ../: tests in this module import the client
// packages directly, and until one does, this import is what keeps the
// requirement from being tidied away.
package tests

import _ "github.com/lemonmcp/lemonmcp/transport"
