// Package hiddenchars removes from text what a model reads and a person
// does not see: Unicode tag characters outside a valid emoji tag sequence,
// bidi overrides and isolates, zero-width and invisible format characters
// (ZWJ and ZWNJ are kept: emoji and many scripts need them), C0 and C1
// controls other than tab and newline, and terminal escape sequences. A
// server's tool descriptions are text a model obeys; these characters are
// how instructions are hidden in them.
//
// Files: clean.go (one string), json.go (every string and key of a JSON
// value, with a finding per place something was removed).
package hiddenchars
