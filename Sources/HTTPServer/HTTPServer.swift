// HTTPServer: first code arrives with its issue.
