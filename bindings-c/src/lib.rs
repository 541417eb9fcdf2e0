// placeholder: see the binding's issue
