// Package jsonx is the one place json-iterator is configured. Everything in
// the library encodes and decodes JSON through it, so the configuration
// (standard-library compatible, no HTML escaping, numbers kept exact) is set
// once and can change in one place.
package jsonx
