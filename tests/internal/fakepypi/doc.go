// Package fakepypi: see fakepypi.go.
package fakepypi
