//go:build tools

// The command this module builds; the blank import keeps it in go.mod's graph.
package tools

import _ "github.com/prometheus/prometheus/cmd/promtool"
