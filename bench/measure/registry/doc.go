// Package registry names stormbench's measurements: the constructors that a
// profile's measurements section enables, by registered name
// ([Constructors]), and how a sharded run's merge combines each
// one's figures ([MergeRules]). Both are built on every call: there is no
// init() registration and no package-level state.
package registry
