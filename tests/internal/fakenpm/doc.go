// Package fakenpm: see fakenpm.go.
package fakenpm
