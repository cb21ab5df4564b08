package duck

import (
	"slices"
	"testing"
)

func TestAllocatorEnviron(t *testing.T) {
	for _, c := range []struct {
		name string
		env  []string
		want []string
	}{
		{"unset", []string{"HOME=/root", "PATH=/bin"}, []string{"HOME=/root", "PATH=/bin", AllocatorEnv + "=" + AllocatorConf}},
		{"empty environment", nil, []string{AllocatorEnv + "=" + AllocatorConf}},
		{"set by the user", []string{AllocatorEnv + "=narenas:4", "PATH=/bin"}, nil},
		{"set to nothing", []string{"PATH=/bin", AllocatorEnv + "="}, nil},
		{"a longer name is not it", []string{AllocatorEnv + "_X=1"}, []string{AllocatorEnv + "_X=1", AllocatorEnv + "=" + AllocatorConf}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := slices.Clone(c.env)
			got := allocatorEnviron(c.env)
			if !slices.Equal(got, c.want) {
				t.Errorf("allocatorEnviron(%q) = %q, want %q", c.env, got, c.want)
			}
			if !slices.Equal(c.env, in) {
				t.Errorf("allocatorEnviron changed its argument: %q", c.env)
			}
		})
	}
}
