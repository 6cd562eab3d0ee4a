// Package gitsync carries a brain's refs/m1nd/ across machines through any
// git remote: fetch into a tracking namespace, fast-forward what the remote
// has that is new, push what is new here in one atomic push with a lease
// per ref, and park — never drop — local letters that lost a race.
package gitsync
