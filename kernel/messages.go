package kernel

import (
	"encoding/json"
	"fmt"
)

// Content of the requests the kernel serves, one struct per msg_type, and of
// the replies it sends. Field names follow the spec; pointers mark fields
// whose absence differs from their zero value.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#messages-on-the-shell-router-dealer-channel

// executeRequest is the content of execute_request.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#execute
type executeRequest struct {
	Code            string            `json:"code"`
	Silent          bool              `json:"silent"`
	StoreHistory    *bool             `json:"store_history"` // default true
	UserExpressions map[string]string `json:"user_expressions"`
	AllowStdin      bool              `json:"allow_stdin"`
	StopOnError     *bool             `json:"stop_on_error"` // default true
}

// completeRequest is the content of complete_request. CursorPos counts
// Unicode code points; nil means the end of the code.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#completion
type completeRequest struct {
	Code      string `json:"code"`
	CursorPos *int   `json:"cursor_pos"`
}

// inspectRequest is the content of inspect_request.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#introspection
type inspectRequest struct {
	Code        string `json:"code"`
	CursorPos   *int   `json:"cursor_pos"`
	DetailLevel int    `json:"detail_level"`
}

// isCompleteRequest is the content of is_complete_request.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#code-completeness
type isCompleteRequest struct {
	Code string `json:"code"`
}

// historyRequest is the content of history_request.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#history
type historyRequest struct {
	Output         bool   `json:"output"`
	Raw            bool   `json:"raw"`
	HistAccessType string `json:"hist_access_type"` // "range", "tail" or "search"
	Session        int    `json:"session"`
	Start          int    `json:"start"`
	Stop           *int   `json:"stop"`
	N              *int   `json:"n"`
	Pattern        string `json:"pattern"`
	Unique         bool   `json:"unique"`
}

// commOpen is the content of comm_open.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#opening-a-comm
type commOpen struct {
	CommID     string `json:"comm_id"`
	TargetName string `json:"target_name"`
}

// shutdownRequest is the content of shutdown_request.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#kernel-shutdown
type shutdownRequest struct {
	Restart bool `json:"restart"`
}

// languageInfo is kernel_info_reply's language_info.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#kernel-info
type languageInfo struct {
	Name              string `json:"name"`
	Version           string `json:"version"`
	MimeType          string `json:"mimetype"`
	FileExtension     string `json:"file_extension"`
	PygmentsLexer     string `json:"pygments_lexer,omitempty"`
	CodemirrorMode    string `json:"codemirror_mode,omitempty"`
	NbconvertExporter string `json:"nbconvert_exporter,omitempty"`
}

// kernelInfoReply is the content of kernel_info_reply.
type kernelInfoReply struct {
	Status                string       `json:"status"`
	ProtocolVersion       string       `json:"protocol_version"`
	Implementation        string       `json:"implementation"`
	ImplementationVersion string       `json:"implementation_version"`
	LanguageInfo          languageInfo `json:"language_info"`
	Banner                string       `json:"banner"`
	HelpLinks             []HelpLink   `json:"help_links"`
	Debugger              bool         `json:"debugger"`
}

// executeReply is the content of execute_reply for status "ok" and
// "aborted"; errorReply carries status "error".
type executeReply struct {
	Status          string         `json:"status"`
	ExecutionCount  int            `json:"execution_count"`
	UserExpressions map[string]any `json:"user_expressions"`
	Payload         []any          `json:"payload"`
}

// errorReply is the content of any reply with status "error", and, without
// Status and ExecutionCount, of the iopub error message.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#request-reply
type errorReply struct {
	Status         string   `json:"status,omitempty"`
	ExecutionCount *int     `json:"execution_count,omitempty"`
	EName          string   `json:"ename"`
	EValue         string   `json:"evalue"`
	Traceback      []string `json:"traceback"`
}

// completeReply is the content of complete_reply.
type completeReply struct {
	Status      string         `json:"status"`
	Matches     []string       `json:"matches"`
	CursorStart int            `json:"cursor_start"`
	CursorEnd   int            `json:"cursor_end"`
	Metadata    map[string]any `json:"metadata"`
}

// inspectReply is the content of inspect_reply.
type inspectReply struct {
	Status   string         `json:"status"`
	Found    bool           `json:"found"`
	Data     map[string]any `json:"data"`
	Metadata map[string]any `json:"metadata"`
}

// isCompleteReply is the content of is_complete_reply; Indent is sent only
// for status "incomplete".
type isCompleteReply struct {
	Status string  `json:"status"`
	Indent *string `json:"indent,omitempty"`
}

// historyReply is the content of history_reply. Each entry is
// [session, line, input], or [session, line, [input, output]] when output
// was requested (output is always null: the kernel keeps no outputs).
type historyReply struct {
	Status  string  `json:"status"`
	History [][]any `json:"history"`
}

// commInfoReply is the content of comm_info_reply.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#comm-info
type commInfoReply struct {
	Status string         `json:"status"`
	Comms  map[string]any `json:"comms"`
}

// shutdownReply is the content of shutdown_reply (on control and, for
// clients that watch only iopub, broadcast there too).
type shutdownReply struct {
	Status  string `json:"status"`
	Restart bool   `json:"restart"`
}

// statusContent is the content of the iopub status message.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#kernel-status
type statusContent struct {
	ExecutionState string `json:"execution_state"` // "busy", "idle" or "starting"
}

// executeInput is the content of the iopub execute_input message.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#code-inputs
type executeInput struct {
	Code           string `json:"code"`
	ExecutionCount int    `json:"execution_count"`
}

// streamContent is the content of the iopub stream message.
type streamContent struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// displayContent is the content of display_data, update_display_data and
// (with ExecutionCount) execute_result.
type displayContent struct {
	ExecutionCount *int           `json:"execution_count,omitempty"`
	Data           map[string]any `json:"data"`
	Metadata       map[string]any `json:"metadata"`
	Transient      map[string]any `json:"transient,omitempty"`
}

// clearOutput is the content of clear_output.
type clearOutput struct {
	Wait bool `json:"wait"`
}

// commClose is the content of comm_close.
type commClose struct {
	CommID string         `json:"comm_id"`
	Data   map[string]any `json:"data"`
}

// decodeContent unmarshals the content of msg into v, saying which message
// type failed.
func decodeContent(msg Message, v any) error {
	if err := json.Unmarshal(msg.Content, v); err != nil {
		return fmt.Errorf("%s content: %w", msg.Header.MsgType, err)
	}
	return nil
}
