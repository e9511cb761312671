print("auth-server")
