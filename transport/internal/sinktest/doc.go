// Package sinktest records what a transport delivers, for the transports'
// tests (only tests import it; it needs nothing beyond the standard
// library). Callbacks only append under a mutex or send on buffered channels;
// every assertion runs on the test goroutine.
package sinktest
