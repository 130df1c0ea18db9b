// Package handles maps the opaque pointers handed to C hosts to Go objects.
//
// Keys come from go-pointer: each is a distinct one-byte C allocation, so a
// handle is a real, unique C address that C code can hold without holding a
// Go pointer. Keys are never released: a freed handle stays behind as a
// tombstone, because releasing the allocation would let the C allocator hand
// the same address to the next client, and a stale handle would then silently
// reach the wrong client. A tombstone costs a few dozen bytes.
package handles
