// Package etf converts JSON text into the Erlang external term format
// (version 131), so that a BEAM host can turn a result into native terms
// with binary_to_term(Bin, [safe]) and needs no JSON library.
//
// The mapping:
//
//	object            map with binary keys (MAP_EXT); for a key given more
//	                  than once, the last value wins
//	array             proper list (LIST_EXT, or NIL_EXT when empty)
//	string            binary holding the UTF-8 text (BINARY_EXT); a lone
//	                  UTF-16 surrogate escape becomes U+FFFD
//	integer           SMALL_INTEGER_EXT, INTEGER_EXT, SMALL_BIG_EXT or
//	                  LARGE_BIG_EXT, exact at any size up to MaxIntegerDigits
//	                  digits
//	number with a     NEW_FLOAT_EXT (an IEEE 754 double)
//	fraction or
//	exponent
//	true, false       the atoms true and false
//	null              the atom nil (Elixir's nil)
//
// Two numbers have no term of their own: an integer literal longer than
// MaxIntegerDigits digits, and a number whose magnitude is beyond the largest
// double. Both are delivered as a binary holding the literal's text, as
// written, rather than failing the whole value.
//
// The input must be one JSON value in UTF-8 (RFC 8259), with white space
// around it allowed; anything else is an error that gives the byte offset.
// Only the atoms true, false and nil are produced, so the output decodes
// with the safe option on any node.
package etf
