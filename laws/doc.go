// Package laws judges the new commits of m1nd refs: every kind of ref
// declares its document and how a new one relates to the one before
// (chain.Define), and the laws add what holds for all of them (history
// only grows, one parent per commit, one document per commit). The git
// hooks, m1nd verify and m1nd sync all judge through this one package.
//
// The laws judge the kinds in the list they are given; a ref of no kind
// listed is none of their business. Wherever m1nd runs, the list is
// Shipped, every kind m1nd ships, named once there; a test hands its own.
package laws
