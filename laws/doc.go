// Package laws judges the new commits of m1nd refs: every kind of ref
// registered with chain declares its document and how a new one relates to
// the one before, and the laws add what holds for all of them (history
// only grows, one parent per commit, one document per commit). The git
// hooks, m1nd verify and m1nd sync all judge through this one package.
//
// The laws judge the kinds registered in the program that runs them; a ref
// of no registered kind is none of their business. The m1nd CLI links every
// kind m1nd ships (its tests check it).
package laws
