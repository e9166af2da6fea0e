// Command devtool-agent: the agent on its own, as the devtool-bin image and a
// source checkout's builds carry it (package agent has the commands).
package main

import agent "devtool.dev/agent"

func main() { agent.Main() }
