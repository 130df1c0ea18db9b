// Package frontmatter parses the YAML frontmatter of a skill's SKILL.md
// (SEP-2640, Agent Skills) with a deliberately small parser: block mappings
// and sequences, plain, quoted and block (| >) scalars, one-line flow
// sequences of scalars, and the empty flow collections.
//
// Anything else (anchors, aliases, tags, complex keys, multi-line quoted
// scalars, flow mappings) is refused with an error rather than guessed at:
// the parse feeds an integrity check (core's resources/read "verify"
// option), and a value the parser might read differently from the server's
// YAML library is a value it must not vouch for. Plain scalars are typed by
// the YAML 1.2 core schema (null, booleans, integers, floats; everything
// else a string), which is what a skill entry's JSON rendering of the
// frontmatter is compared to.
//
// Error messages name the line and the construct that was refused.
package frontmatter
