// Package gitsync carries a brain's refs/m1nd/ across machines through any
// git remote: fetch into a tracking namespace, fast-forward what the remote
// has that is new, push what is new here (creations and fast-forwards only)
// in one atomic, non-forced push — git's per-ref fast-forward check is the
// compare-and-swap, with a glob refspec per namespace rather than a lease
// per ref (see push.go) — and park, never drop, local letters that lost a
// race.
package gitsync
