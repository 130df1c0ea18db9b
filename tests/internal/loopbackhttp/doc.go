// Package loopbackhttp: see loopbackhttp.go.
package loopbackhttp
