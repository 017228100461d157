//go:build !linux

package main

// hugePages is a no-op where transparent huge pages are not Linux's.
func hugePages([]byte) {}
