package cells

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/internal/suggest"
)

// contextKey is one key that %context records.
type contextKey struct {
	name    string
	aliases []string
	integer bool // a positive integer
	help    string
}

// contextKeys are the keys %context knows; rules read them by these names.
var contextKeys = []contextKey{
	{name: "tp", aliases: []string{"tensor-parallel-size"}, integer: true, help: "tensor-parallel size"},
	{name: "pp", aliases: []string{"pipeline-parallel-size"}, integer: true, help: "pipeline-parallel size"},
	{name: "dp", aliases: []string{"data-parallel-size"}, integer: true, help: "data-parallel size"},
	{name: "ep", aliases: []string{"expert-parallel-size"}, integer: true, help: "expert-parallel size"},
	{name: "max-num-seqs", integer: true, help: "vLLM --max-num-seqs"},
	{name: "max-num-batched-tokens", integer: true, help: "vLLM --max-num-batched-tokens"},
	{name: "cudagraph-mode", aliases: []string{"cudagraph", "cuda-graph-mode"}, help: "none, piecewise, full, full_and_piecewise, full_decode_only, ..."},
	{name: "isl", aliases: []string{"input-len"}, integer: true, help: "input sequence length, tokens"},
	{name: "osl", aliases: []string{"output-len"}, integer: true, help: "output sequence length, tokens"},
	{name: "batch-size", aliases: []string{"batch", "bs"}, integer: true, help: "batch size (requests or samples per step)"},
	{name: "model", help: "model name"},
	{name: "dtype", help: "compute dtype (bf16, fp8, ...)"},
}

func contextKeyList() string {
	return strings.Join(contextKeyNames(), ", ")
}

func contextKeyNames() []string {
	var names []string
	for _, k := range contextKeys {
		names = append(names, k.name)
	}
	return names
}

// unknownContextKey words the error for a key k that names no context
// key: the closest key, as canonicalContextKey reads a key, and the keys.
func unknownContextKey(k string) string {
	hint := suggest.DidYouMean(strings.ReplaceAll(strings.ToLower(k), "_", "-"), contextKeyNames(), nil)
	return fmt.Sprintf("unknown key %q%s (keys: %s)", k, hint, contextKeyList())
}

// canonicalContextKey maps a key as written (any case, _ or -) to its
// canonical name.
func canonicalContextKey(k string) (contextKey, bool) {
	k = strings.ReplaceAll(strings.ToLower(k), "_", "-")
	for _, ck := range contextKeys {
		if ck.name == k {
			return ck, true
		}
		for _, a := range ck.aliases {
			if a == k {
				return ck, true
			}
		}
	}
	return contextKey{}, false
}

func runContext(_ context.Context, c *call) (*Result, error) {
	opts, pos, err := parseOptions(c.m, c.full, c.args)
	if err != nil {
		return nil, err
	}
	type set struct{ key, value string }
	var sets []set
	for _, a := range pos {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return nil, usagef("%%context: %q is not KEY=VALUE", a)
		}
		ck, known := canonicalContextKey(k)
		if !known {
			return nil, usagef("%%context: %s", unknownContextKey(k))
		}
		if v != "" && ck.integer {
			if n, err := strconv.Atoi(v); err != nil || n <= 0 {
				return nil, usagef("%%context: %s=%q is not a positive integer", ck.name, v)
			}
		}
		sets = append(sets, set{ck.name, v})
	}
	c.s.mu.Lock()
	if opts["clear"] == "true" {
		clear(c.s.context)
	}
	for _, st := range sets {
		if st.value == "" {
			delete(c.s.context, st.key)
		} else {
			c.s.context[st.key] = st.value
		}
	}
	ctxCopy := make(map[string]string, len(c.s.context))
	for k, v := range c.s.context {
		ctxCopy[k] = v
	}
	c.s.mu.Unlock()
	// What was just recorded goes to stdout, the record itself is the value.
	for _, st := range sets {
		if st.value == "" {
			c.pub.Stream("stdout", fmt.Sprintf("context: %s cleared\n", st.key))
		} else {
			c.pub.Stream("stdout", fmt.Sprintf("context: %s = %s recorded; findings and %%diff use it\n", st.key, st.value))
		}
	}
	return contextResult(ctxCopy), nil
}

// contextResult shows the record as a two-column table, keys in the order
// of contextKeys.
func contextResult(m map[string]string) *Result {
	if len(m) == 0 {
		return textResult("context: nothing recorded (%context tp=4 max-num-seqs=256 ... records it)\n")
	}
	t := &table.Table{Name: "context", Columns: []table.Column{{Name: "key", Type: "VARCHAR"}, {Name: "value", Type: "VARCHAR"}, {Name: "meaning", Type: "VARCHAR"}}}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	order := map[string]int{}
	for i, k := range contextKeys {
		order[k.name] = i
	}
	sort.Slice(keys, func(i, j int) bool { return order[keys[i]] < order[keys[j]] })
	for _, k := range keys {
		ck, _ := canonicalContextKey(k)
		t.Rows = append(t.Rows, []any{k, m[k], ck.help})
	}
	t.Total = int64(len(t.Rows))
	return TableResult(t)
}
