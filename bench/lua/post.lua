-- POST a fixed body. Environment: BODY, CONTENT_TYPE, and optional AUTHORIZATION,
-- COOKIE, CSRF_TOKEN.
wrk.method = "POST"
wrk.body = os.getenv("BODY")
wrk.headers["Content-Type"] = os.getenv("CONTENT_TYPE")
for header, variable in pairs({Authorization = "AUTHORIZATION", Cookie = "COOKIE", ["X-CSRF-Token"] = "CSRF_TOKEN"}) do
    local value = os.getenv(variable)
    if value and value ~= "" then wrk.headers[header] = value end
end
