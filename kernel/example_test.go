package kernel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/tracebook/tracebook/kernel"
)

func ExampleDecode() {
	key := []byte("secret")
	frames, _ := kernel.Encode(kernel.Message{
		Identities: [][]byte{[]byte("client-1")},
		Header:     kernel.Header{MsgID: "m1", MsgType: "execute_request", Version: kernel.ProtocolVersion},
		Content:    json.RawMessage(`{"code":"SELECT 1"}`),
	}, key)
	msg, err := kernel.Decode(frames, key)
	fmt.Println(msg.Header.MsgType, string(msg.Identities[0]), string(msg.Content), err)

	_, err = kernel.Decode(frames, []byte("other key"))
	fmt.Println(err)
	// Output:
	// execute_request client-1 {"code":"SELECT 1"} <nil>
	// bad signature
}

// The composition root runs the kernel with the notebook's Executor.
func ExampleRun() {
	var exec kernel.Executor // from package cells
	info := kernel.Info{Implementation: "tracebook", LanguageName: "sql", MimeType: "application/sql", FileExtension: ".sql"}
	err := kernel.Run(context.Background(), "/run/user/1000/jupyter/kernel-1.json", exec, info, slog.Default())
	if err != nil {
		fmt.Println(err)
	}
}
