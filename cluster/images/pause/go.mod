module devtool.local/cluster/pause

go 1.22
