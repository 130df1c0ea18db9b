// Package fixturebin: see fixturebin.go.
package fixturebin
