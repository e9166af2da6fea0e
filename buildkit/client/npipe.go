package buildkitclient

// Windows named pipes (npipe:////./pipe/NAME): the CLI's build tunnel listens on one there, where
// Node cannot listen on a unix socket. The helper registers the scheme on every platform and
// refuses it outside Windows.
import _ "github.com/moby/buildkit/client/connhelper/npipe"
