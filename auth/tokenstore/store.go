package tokenstore

import (
	"context"
	"errors"
)

// State says whether a stored grant can be used.
type State string

const (
	// StateOK is a usable grant (also what an empty state means).
	StateOK State = "ok"
	// StateNeedsReauth marks a grant whose refresh token the authorization
	// server refused and no process has replaced: the next process that
	// can authorize interactively does so; the others fail with
	// LMCP_E_AUTH_REQUIRED instead of redeeming it again. A record is
	// never deleted: it may hold what another process just wrote.
	StateNeedsReauth State = "needs_reauth"
)

// Lease is a claim on the grant's next redemption: Owner (a random id of
// one process's manager) may redeem the refresh token until Until (Unix
// milliseconds). It outlives the token request's timeout, so a holder
// that is alive always finishes (or gives up) before it expires.
type Lease struct {
	Owner string `json:"owner"`
	Until int64  `json:"until"`
}

// Record is one shared grant. ExpiresAt is absolute (Unix milliseconds, 0
// when unknown). DPoPJKT is the RFC 7638 thumbprint of the DPoP key a
// DPoP-bound grant is bound to: the processes sharing it are configured
// with that key (auth.dpop.key_pem), and a process holding another key
// does not use its tokens. The private key itself is never stored. ClientID and
// ClientSecret are credentials dynamic registration issued; Issuer binds
// the record to one authorization server.
type Record struct {
	AccessToken  string `json:"access_token,omitempty"`
	TokenType    string `json:"token_type,omitempty"`
	ExpiresAt    int64  `json:"expires_at,omitempty"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Generation   uint64 `json:"generation"`
	DPoPJKT      string `json:"dpop_jkt,omitempty"`
	Lease        *Lease `json:"lease,omitempty"`
	State        State  `json:"state,omitempty"`
	Scope        string `json:"scope,omitempty"`
	Issuer       string `json:"issuer,omitempty"`
	Resource     string `json:"resource,omitempty"`
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
}

// Clone is a deep copy (the lease is a pointer).
func (r *Record) Clone() *Record {
	if r == nil {
		return nil
	}
	c := *r
	if r.Lease != nil {
		l := *r.Lease
		c.Lease = &l
	}
	return &c
}

// LeasedBy reports whether a lease other than owner's is live at nowMS.
func (r *Record) LeasedBy(owner string, nowMS int64) bool {
	return r != nil && r.Lease != nil && r.Lease.Owner != owner && r.Lease.Until > nowMS
}

// Version identifies one stored state of a key; 0 means nothing stored.
// Every successful CompareAndSave answers a larger one.
type Version int64

// Store is the contract of every shared token store. Implementations are
// safe for concurrent use by many goroutines and many processes.
type Store interface {
	// Load returns the record under key and its version, or (nil, 0)
	// when there is none.
	Load(ctx context.Context, key string) (*Record, Version, error)
	// CompareAndSave stores rec under key if the stored version is
	// expected (0: nothing stored yet) and answers (new version, nil).
	// Otherwise nothing is written and it answers the stored version and
	// the record that won (nil only if the key vanished).
	CompareAndSave(ctx context.Context, key string, expected Version, rec *Record) (Version, *Record, error)
	// Close releases connections and files.
	Close() error
}

// ErrClosed is returned by a store used after Close.
var ErrClosed = errors.New("the token store is closed")
