module example.com/api
