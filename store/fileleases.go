package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"hash/crc32"

	"github.com/lemonmcp/lemonmcp/internal/lockedfile"
)

// The file store keeps leases in place in its lock file (PATH.lock), one
// fixed-size slot per document, so that claiming and releasing a lease (the
// writes that carry no new body: two of the three writes of a grant's
// refresh) are one pwrite under the flock instead of an atomic replacement of the
// whole store. Slots are never synced: a lease lost in a crash simply
// expires, and every process that held or awaited it died with the
// machine.
//
// A slot belongs to one data version of its key: it is valid only while
// the data file's version of the key is still the slot's base. Every write
// of the data file invalidates the key's slot (its version moves past
// the base, and the slot is cleared as well). While valid, the slot's
// lease replaces the record's and its version is the key's version, so
// readers see one version sequence: each write (slot or file) answers the
// previous version + 1.
//
// Slot layout (little endian, leaseSlotSize bytes):
//
//	0   magic "LMLS"
//	4   layout (1)
//	5   owner length
//	6   flags (bit 0: a lease is held; clear: released)
//	7   reserved
//	8   key hash: the first 16 bytes of SHA-256(collection NUL key)
//	24  base: the data version the slot was written on (0: cleared)
//	32  version
//	40  lease until (Unix milliseconds)
//	48  lease owner (up to leaseOwnerMax bytes)
//	124 CRC-32 (IEEE) of bytes 0..123
//
// A slot whose magic or checksum is wrong, or a short one at the end of
// the file, is torn: a reader that meets one rereads under the shared
// lock (a writer may be midway), and what is still torn then is no slot
// at all (no lease: the record's own). Only a crash of the machine or of
// the disk leaves one, and then no live process holds a version it
// answered.
const (
	leaseSlotSize   = 128
	leaseOwnerMax   = 76
	leaseLayout     = 1
	leaseFlagHeld   = 1
	maxLeaseSlots   = 4096 // bounds what a reader reads: a store of that many keys
	leaseCRCOffset  = leaseSlotSize - 4
	leaseOwnerStart = 48
)

var leaseMagic = [4]byte{'L', 'M', 'L', 'S'}

// leaseSlot is one decoded slot.
type leaseSlot struct {
	key     [16]byte
	base    Version
	version Version
	lease   *Lease
}

// leaseTable is the lock file's slots as read: where each key's slot is,
// and which slot positions may be (re)used.
type leaseTable struct {
	slots   []leaseSlot // by position; a torn position has torn[i] set
	torn    []bool
	anyTorn bool
}

func leaseKeyHash(collection, key string) [16]byte {
	sum := sha256.Sum256([]byte(collection + "\x00" + key))
	var h [16]byte
	copy(h[:], sum[:16])
	return h
}

// readLeaseTable reads every slot of the lock file.
func readLeaseTable(l *lockedfile.Lock) (*leaseTable, error) {
	buf := make([]byte, 0, 8*leaseSlotSize)
	chunk := make([]byte, 8*leaseSlotSize)
	for off := int64(0); off < maxLeaseSlots*leaseSlotSize; {
		n, err := l.ReadAt(chunk, off)
		if err != nil {
			return nil, err
		}
		buf = append(buf, chunk[:n]...)
		off += int64(n)
		if n < len(chunk) {
			break
		}
	}
	t := &leaseTable{}
	for off := 0; off < len(buf); off += leaseSlotSize {
		if off+leaseSlotSize > len(buf) {
			// A short slot at the end: a writer appending, or a crash.
			t.slots = append(t.slots, leaseSlot{})
			t.torn = append(t.torn, true)
			t.anyTorn = true
			break
		}
		s, ok := decodeLeaseSlot(buf[off : off+leaseSlotSize])
		t.slots = append(t.slots, s)
		t.torn = append(t.torn, !ok)
		t.anyTorn = t.anyTorn || !ok
	}
	return t, nil
}

// find returns the position of key's slot, or -1.
func (t *leaseTable) find(key [16]byte) int {
	for i, s := range t.slots {
		if !t.torn[i] && s.key == key {
			return i
		}
	}
	return -1
}

// free returns a position a new key's slot may take: a torn one, one
// cleared, or the end of the file.
func (t *leaseTable) free() int {
	for i, s := range t.slots {
		if t.torn[i] || s.base == 0 {
			return i
		}
	}
	return len(t.slots)
}

// current is key's slot if it is valid for the data version base.
func (t *leaseTable) current(key [16]byte, base Version) (leaseSlot, bool) {
	i := t.find(key)
	if i < 0 || base == 0 || t.slots[i].base != base {
		return leaseSlot{}, false
	}
	return t.slots[i], true
}

func decodeLeaseSlot(b []byte) (leaseSlot, bool) {
	if [4]byte(b[0:4]) != leaseMagic || b[4] != leaseLayout ||
		crc32.ChecksumIEEE(b[:leaseCRCOffset]) != binary.LittleEndian.Uint32(b[leaseCRCOffset:]) {
		return leaseSlot{}, false
	}
	ownerLen := int(b[5])
	if ownerLen > leaseOwnerMax {
		return leaseSlot{}, false
	}
	s := leaseSlot{
		base:    Version(binary.LittleEndian.Uint64(b[24:])),
		version: Version(binary.LittleEndian.Uint64(b[32:])),
	}
	copy(s.key[:], b[8:24])
	if b[6]&leaseFlagHeld != 0 {
		s.lease = &Lease{
			Owner: string(b[leaseOwnerStart : leaseOwnerStart+ownerLen]),
			Until: int64(binary.LittleEndian.Uint64(b[40:])),
		}
	}
	return s, true
}

func encodeLeaseSlot(s leaseSlot) []byte {
	b := make([]byte, leaseSlotSize)
	copy(b[0:4], leaseMagic[:])
	b[4] = leaseLayout
	copy(b[8:24], s.key[:])
	binary.LittleEndian.PutUint64(b[24:], uint64(s.base))
	binary.LittleEndian.PutUint64(b[32:], uint64(s.version))
	if s.lease != nil {
		b[5] = byte(len(s.lease.Owner))
		b[6] = leaseFlagHeld
		binary.LittleEndian.PutUint64(b[40:], uint64(s.lease.Until))
		copy(b[leaseOwnerStart:], s.lease.Owner)
	}
	binary.LittleEndian.PutUint32(b[leaseCRCOffset:], crc32.ChecksumIEEE(b[:leaseCRCOffset]))
	return b
}

// leaseFits reports whether a lease can live in a slot (an owner longer
// than a slot holds is written to the data file instead).
func leaseFits(l *Lease) bool { return l == nil || len(l.Owner) <= leaseOwnerMax }

// writeLeaseSlot writes s at position i (under the exclusive lock).
func writeLeaseSlot(l *lockedfile.Lock, i int, s leaseSlot) error {
	return l.WriteAt(encodeLeaseSlot(s), int64(i)*leaseSlotSize)
}

// leaseOnly reports whether next differs from cur in its lease alone: a
// write that carries no new body, kept in the lease slot.
func leaseOnly(cur, next *Document) bool {
	return cur != nil && next != nil && bytes.Equal(cur.Body, next.Body)
}
