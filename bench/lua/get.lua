-- GET with an optional Cookie header (environment: COOKIE).
local cookie = os.getenv("COOKIE")
if cookie and cookie ~= "" then wrk.headers["Cookie"] = cookie end
