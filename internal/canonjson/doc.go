// Package canonjson writes the RFC 8785 JSON Canonicalization Scheme (JCS)
// form of a JSON text: object members sorted by the UTF-16 code units of
// their names, no insignificant white space, strings with the minimal
// escaping, and numbers in the ECMAScript shortest round-trip form of their
// IEEE 754 double value. Hashes of canonical JSON (the sampling policy's
// request_hash) are reproducible in any language that implements JCS.
package canonjson
